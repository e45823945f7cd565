"""The FtpFile plugin (:mod:`.`)."""

from __future__ import annotations

from . import ServerFile
from .options import FTP_CONN_OPTION


class FtpFile(ServerFile):
    name = "FtpFile"
    scheme = "ftp"
    connection_option = FTP_CONN_OPTION
    description = "Reads or writes text, csv, json, parquet, orc and xml files on an FTP server."


CONNECTOR = FtpFile()
