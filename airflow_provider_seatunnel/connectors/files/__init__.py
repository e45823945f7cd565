"""The file family's shared code: the file options (:mod:`.options`), the table and partition
placeholders (:mod:`.placeholders`) and the readers and writers of every file format (:mod:`.formats`
reads, :mod:`.writing` writes, with :mod:`.excel` and :mod:`.documents`). Every file connector
(LocalFile, S3File, the FTP/SFTP and HDFS stores, the object stores) and the connectors that name tables
or files (Hive, Kafka, Delta, Iceberg, Paimon, Jdbc) import these modules, never a sibling connector."""
