"""Shared code of the Stream Load family (Doris, StarRocks): the frontends' address and credentials, the HTTP
client (auth, redirects, retries, error classes), the commit-log table over the MySQL protocol with its
compare-and-set claims, the save modes, the rows' load text, and the driver's two phases over prepared load
transactions. Each member connector supplies its own transaction protocol (:class:`.sink.Family`): how a
writer loads and prepares one transaction, and how a prepared transaction is committed or aborted.
"""
