"""The FtpFile plugin (:mod:`.`)."""

from __future__ import annotations

from ..files.optionspec import FTP_SPEC
from . import ServerFile
from .options import FTP_CONN_OPTION


class FtpFile(ServerFile):
    name = "FtpFile"
    scheme = "ftp"
    connection_option = FTP_CONN_OPTION
    option_spec = FTP_SPEC
    #: masked too, though FTP reads no key: a block copied from an SFTP one keeps it out of plans and logs
    secrets = frozenset({"private_key"})
    description = "Reads or writes text, csv, json, parquet, orc and xml files on an FTP server."


CONNECTOR = FtpFile()
