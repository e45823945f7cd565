"""OssFile, CosFile, ObsFile: text, csv, json, parquet and orc objects in Aliyun OSS, Tencent COS
and Huawei OBS buckets, through each store's S3-compatible API on S3File's code.

A block keeps SeaTunnel's options for its plugin (the bucket URI, the keys, the endpoint or
region: :mod:`.stores`) and LocalFile's file options; :func:`.stores.settings` maps them onto
S3File's settings, and S3File's source and sink run with them (:mod:`..files.onstore`): S3A for the
data, boto3 for listing and copying, the fenced commit by conditional writes. Each plugin is a
module (:mod:`.ossfile`, :mod:`.cosfile`, :mod:`.obsfile`) holding a subclass of
:class:`.connector.ObjectStoreFile`; compile-time checks: :mod:`.checks`.

The sink's commit needs the store's S3 API to honour ``If-None-Match``/``If-Match`` on
``PutObject``: before writing, the sink checks that it does, and fails with a configuration
error when it refuses or ignores them.
"""
