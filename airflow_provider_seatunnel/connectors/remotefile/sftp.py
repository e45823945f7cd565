"""The SftpFile plugin (:mod:`.`)."""

from __future__ import annotations

from ..files.optionspec import SFTP_SPEC
from . import ServerFile
from .options import SFTP_CONN_OPTION


class SftpFile(ServerFile):
    name = "SftpFile"
    scheme = "sftp"
    connection_option = SFTP_CONN_OPTION
    option_spec = SFTP_SPEC
    description = "Reads or writes text, csv, json, parquet, orc and xml files on an SFTP server."


CONNECTOR = SftpFile()
