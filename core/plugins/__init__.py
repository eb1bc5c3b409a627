"""Plugins: hook specifications, typed registrars and the plugin host."""

from .hookspecs import hookimpl
from .host import PluginHost, create_host

__all__ = ["hookimpl", "PluginHost", "create_host"]
