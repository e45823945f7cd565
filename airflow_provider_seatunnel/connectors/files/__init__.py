"""The files family: what file connectors (and sinks that name tables or paths with placeholders)
share, so that no connector imports another. ``placeholders``: table placeholders
(``${table_name}``...), file names, partition directories, Java date patterns and the assets of a
path."""
