"""The table of known base images: what each FROM becomes and what it says it substituted."""

from __future__ import annotations

import pytest
from autoenvscaling.sandbox.rootfs import BASES, KNOWN_IMAGES, resolve_base

CASES = [
    # image, base, a word the note must contain ("" = the mapping is faithful, no note)
    ("debian:bookworm", "debian-bookworm", ""),
    ("debian:12-slim", "debian-bookworm", ""),
    ("docker.io/library/debian:trixie", "debian-trixie", ""),
    ("debian:bullseye", "debian-bookworm", "bullseye"),
    ("ubuntu:24.04", "ubuntu-on-trixie", "Ubuntu 24.04"),
    ("ubuntu:22.04", "ubuntu-on-bookworm", "Ubuntu 22.04"),
    ("ubuntu:noble-20240801", "ubuntu-on-trixie", "Ubuntu 24.04"),
    ("ubuntu:latest", "ubuntu-on-trixie", "Ubuntu latest"),
    ("python:3.11-slim-bookworm", "python-3.11-bookworm", ""),
    ("python:3.13-slim", "python-3.13-trixie", ""),
    ("python:3.13-slim-bookworm", "python-3.13-trixie", "trixie stands in to keep Python 3.13"),
    ("python:3.12-slim", "python-3.13-trixie", "Python 3.12 is not in Debian"),
    ("python:3.9", "python-3.11-bookworm", "Python 3.9 is not in Debian"),
    ("python:3.13-alpine", "python-3.13-trixie", "Alpine"),
    ("python:latest", "python-3.13-trixie", ""),
    ("ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624", "tbench-trixie", "tmux"),
    ("ghcr.io/laude-institute/t-bench/python-3-13:20250620", "tbench-python-3.13-trixie", ""),
    ("buildpack-deps:bookworm", "debian-bookworm", "build tools"),
    ("autoenvscaling/base:debian-trixie", "debian-trixie", ""),
]


@pytest.mark.parametrize("image,base,note", CASES)
def test_known_images_map_with_their_substitutions(image, base, note):
    mapping = resolve_base(image)
    assert mapping is not None and mapping.base == base and mapping.base in BASES
    if note:
        assert note in mapping.note, mapping.note
    else:
        assert mapping.note == "", mapping.note


def test_unknown_images_are_not_mapped_but_users_can_map_them(monkeypatch):
    assert resolve_base("registry.example.com/team/custom:1") is None
    monkeypatch.setenv("AUTOENVSCALING_BASE_IMAGES", "registry.example.com/team/*=debian-bookworm")
    mapping = resolve_base("registry.example.com/team/custom:1")
    assert mapping is not None and mapping.base == "debian-bookworm" and "AUTOENVSCALING_BASE_IMAGES" in mapping.note


def test_python_bases_carry_the_python_image_settings():
    for name in ("python-3.11-bookworm", "python-3.13-trixie"):
        spec = BASES[name]
        assert spec.python_image and "python3-pip" in spec.packages and "python-is-python3" in spec.packages
        assert dict(spec.env)["PYTHON_VERSION"] == name.split("-")[1]
    # a recipe change must change the cache identity
    assert BASES["debian-bookworm"].recipe() != BASES["debian-trixie"].recipe()


def test_every_table_row_names_real_bases():
    names = set(BASES)
    for _pattern, base, _what in KNOWN_IMAGES:
        assert {b.strip() for b in base.replace(" or ", "/").split("/")} & (names | {"NAME"}), base


def test_stand_ins_add_only_what_their_images_have():
    """debian:* is minbase itself (no python3, ca-certificates, procps: the official images have none);
    the Ubuntu stand-ins add procps and sensible-utils (ubuntu:22.04/24.04 ship them), the python ones
    what python:*-slim installs. None adds python3 where the image has none."""
    assert BASES["debian-bookworm"].packages == () and BASES["debian-trixie"].packages == ()
    for name in ("ubuntu-on-bookworm", "ubuntu-on-trixie"):
        assert BASES[name].packages == ("procps", "sensible-utils")
    for name, spec in BASES.items():
        if not spec.python_image and not name.startswith("tbench"):
            assert not {"python3", "ca-certificates"} & set(spec.packages), name
    assert {"ca-certificates", "netbase", "tzdata", "python3"} <= set(BASES["python-3.11-bookworm"].packages)
    for images, base, note in KNOWN_IMAGES:  # every table row says what it adds or lacks, or that it is faithful
        assert note, images
