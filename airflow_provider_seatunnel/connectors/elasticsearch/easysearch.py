"""Easysearch as a registered plugin: the Elasticsearch connector's code under SeaTunnel's Easysearch
options (:class:`.Easysearch`)."""

from __future__ import annotations

from . import EASYSEARCH

CONNECTOR = EASYSEARCH

__all__ = ["CONNECTOR"]
