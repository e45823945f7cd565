"""The options of a block that names a database (the SQL family's connection options, declared once) and
messages without secrets (:func:`mask`). Shared by every connector of the SQL family: a connector's own
spec lists :data:`CONNECTION` first, and :func:`connection_of <.connection.connection_of>` reads them
through :data:`CONNECTION_SPEC`."""

from __future__ import annotations

from ...spi.errors import RuntimeConfigError
from ...spi.optionspec import Option, OptionSpec
from ...spi.secrets import mask_credentials

DEFAULT_TIMEOUT_SEC = 30
#: the option bounding the job's connection pool of one database (SeaTunnel's CDC connectors name theirs
#: so; its Jdbc connector has none) and its default (theirs)
POOL_SIZE_OPTION = "connection.pool.size"
DEFAULT_POOL_SIZE = 20
#: the option naming where the driver's jars are (the hook sets it from an Airflow connection's extra)
DRIVER_PATH_OPTION = "driver_path"
_NOT_HERE = "plans but cannot run here."

#: the connection options, SeaTunnel's names and defaults
CONNECTION = (
    Option("url", identity=True, description="The JDBC URL (required unless an Airflow connection gives it)."),
    Option("driver", description="The JDBC driver class (required unless an Airflow connection gives it)."),
    Option("user", description="The user."),
    Option("password", secret=True, description="The user's password."),
    Option("properties", "map", description="JDBC connection properties."),
    Option("connection_check_timeout_sec", "int", DEFAULT_TIMEOUT_SEC, "Seconds a connection check waits.",
           minimum=1),
    Option(POOL_SIZE_OPTION, "int", DEFAULT_POOL_SIZE, "Connections the job's driver-side statements keep open "
           "to this database at most (one pool per URL and user, shared by every table).", minimum=1),
    Option("dialect", description="The dialect, when the URL does not say it."),
    Option("compatible_mode", description="The database's compatibility mode (a dialect's variant)."),
    Option(DRIVER_PATH_OPTION, description="Jars (or folders of jars) holding the driver, separated by : or ,."),
    Option("use_kerberos", "bool", False, "Kerberos authentication: true " + _NOT_HERE),
    Option("kerberos_principal", description="Kerberos: " + _NOT_HERE),
    Option("kerberos_keytab_path", description="Kerberos: " + _NOT_HERE),
    Option("krb5_path", description="Kerberos: " + _NOT_HERE),
)
CONNECTION_SPEC = OptionSpec(CONNECTION)


def config_error(message: str) -> RuntimeConfigError:
    return RuntimeConfigError(message)


def mask(message: str, password: str | None = None) -> str:
    """``message`` without secrets: URL ``password=``/``user=`` parameters, ``user:password@``
    user info, and the literal ``password`` wherever it appears."""
    message = mask_credentials(message)
    if password:
        message = message.replace(password, "******")
    return message
