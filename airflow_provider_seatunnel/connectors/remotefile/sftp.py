"""The SftpFile plugin (:mod:`.`)."""

from __future__ import annotations

from . import ServerFile
from .options import SFTP_CONN_OPTION


class SftpFile(ServerFile):
    name = "SftpFile"
    scheme = "sftp"
    connection_option = SFTP_CONN_OPTION
    description = "Reads or writes text, csv, json, parquet, orc and xml files on an SFTP server."


CONNECTOR = SftpFile()
