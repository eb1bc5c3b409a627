"""The image's modules (image/webapp.py, image/apps/*.py) imported on the host: the generators use
the apps' schemas and the seed helpers, tests run the apps in-process. They import ``webapp`` as a
top-level module, as they do inside the image, so the image folder goes on sys.path."""

from __future__ import annotations

import importlib
import sys
from importlib import resources
from types import ModuleType

IMAGE = str(resources.files(__package__).joinpath("image"))
if IMAGE not in sys.path:
    sys.path.append(IMAGE)

import webapp  # noqa: E402  (the image's module, found through the path above)


def app_module(name: str) -> ModuleType:
    return importlib.import_module(f"aes_apps.{name}")


__all__ = ["app_module", "webapp"]
