"""Plugins: hook specifications, typed registrars and the plugin host."""

from .declare import declare
from .hookspecs import hookimpl
from .host import PluginHost, create_host

__all__ = ["declare", "hookimpl", "PluginHost", "create_host"]
