"""The built-in connectors: one module (or package, for the big ones) each, written against the
contract in :mod:`..spi`. The registry finds them by name (:mod:`..spi.registry`)."""
