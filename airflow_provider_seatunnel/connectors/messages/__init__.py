"""The message family: what connectors that exchange one value per message or record share
(Redis values, HTTP records): converting a JSON or text value to a row and a row to one
(:mod:`.values`)."""
