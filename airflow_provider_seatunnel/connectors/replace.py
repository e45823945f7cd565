"""Replace transform: replaces text in a field."""

from .base import TRANSFORM, Connector

CONNECTOR = Connector(
    name="Replace",
    kinds=frozenset({TRANSFORM}),
    required=("replace_field","pattern","replacement",),
    description="Replaces text in a field.",
)
