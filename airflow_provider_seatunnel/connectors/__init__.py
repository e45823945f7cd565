"""Plugins, one module each: options, compile-time checks and (later) Spark code."""

from .base import SINK, SOURCE, TRANSFORM, Connector
from .registry import available, get_connector

__all__ = ["SINK", "SOURCE", "TRANSFORM", "Connector", "available", "get_connector"]
