"""What a stand-in holds: what its image holds, no more. A task must not pass here only because our
root has a tool the real image lacks (python3 in debian:bookworm, say), nor fail because it lacks one
the image has (procps in ubuntu:24.04). Checked inside real bwrap sandboxes built from each FROM."""

from __future__ import annotations

import asyncio

import pytest

from .conftest import make_task

pytestmark = pytest.mark.slow  # the first run builds four base root filesystems (~1 min each)

# debian:bookworm's packages, from docker-library/repo-info's manifest of the official image
# (repos/debian/local/bookworm.md): the stand-in must have exactly these.
DEBIAN_BOOKWORM = set("""
adduser apt base-files base-passwd bash bsdutils coreutils dash debconf debian-archive-keyring debianutils
diffutils dpkg e2fsprogs findutils gcc-12-base gpgv grep gzip hostname init-system-helpers libacl1
libapt-pkg6.0 libattr1 libaudit-common libaudit1 libblkid1 libbz2-1.0 libc-bin libc6 libcap-ng0 libcap2
libcom-err2 libcrypt1 libdb5.3 libdebconfclient0 libext2fs2 libffi8 libgcc-s1 libgcrypt20 libgmp10
libgnutls30 libgpg-error0 libhogweed6 libidn2-0 liblz4-1 liblzma5 libmd0 libmount1 libnettle8 libp11-kit0
libpam-modules libpam-modules-bin libpam-runtime libpam0g libpcre2-8-0 libseccomp2 libselinux1
libsemanage-common libsemanage2 libsepol2 libsmartcols1 libss2 libstdc++6 libsystemd0 libtasn1-6 libtinfo6
libudev1 libunistring2 libuuid1 libxxhash0 libzstd1 login logsave mawk mount ncurses-base ncurses-bin passwd
perl-base sed sysvinit-utils tar tzdata usr-is-merged util-linux util-linux-extra zlib1g
""".split())
PROBE = ("dpkg-query -W -f='${Package}\\n' | sort | tr '\\n' ' '; echo; "
         "for c in python3 python pip ps tmux; do command -v $c >/dev/null && printf '%s ' $c; done; echo")
CASES = {  # FROM -> (commands it must have, commands it must not have, packages it must have, must not have)
    "debian:bookworm": ((), ("python3", "python", "pip", "ps"), (), ("python3", "ca-certificates", "procps")),
    "debian:trixie": ((), ("python3", "python", "pip", "ps"), ("tzdata",), ("python3", "ca-certificates", "procps")),
    "ubuntu:24.04": (("ps",), ("python3", "python", "pip"), ("procps", "sensible-utils"),
                     ("python3", "ca-certificates", "perl")),
    "python:3.11-slim-bookworm": (("python3", "python", "pip"), ("ps",), ("ca-certificates", "netbase", "tzdata"),
                                  ("procps",)),
}


def probe(backend, image: str) -> tuple[set[str], set[str]]:
    """(installed packages, commands found of python3 python pip ps tmux) in a sandbox built FROM image."""
    task = make_task(f"FROM {image}\nWORKDIR /app\n", name="base-fidelity")

    async def go():
        prepared = await backend.prepare(task)
        async with await backend.create(task, prepared) as sandbox:
            return await sandbox.exec(PROBE)

    result = asyncio.run(go())
    packages, commands = (result.stdout.splitlines() + ["", ""])[:2]
    return set(packages.split()), set(commands.split())


@pytest.mark.parametrize("image", sorted(CASES))
def test_a_stand_in_has_what_its_image_has(backend, image):
    packages, commands = probe(backend, image)
    has, lacks, installed, absent = CASES[image]
    assert set(has) <= commands and not set(lacks) & commands, commands
    assert set(installed) <= packages and not set(absent) & packages, sorted(packages)


def test_debian_bookworm_is_exactly_the_official_images_package_set(backend):
    packages, _ = probe(backend, "debian:bookworm")
    assert packages == DEBIAN_BOOKWORM, (sorted(packages - DEBIAN_BOOKWORM), sorted(DEBIAN_BOOKWORM - packages))
