"""What a networked build step gets from the host: CA bundle, proxies, index settings."""

from __future__ import annotations

from pathlib import Path

from autoenvscaling.sandbox.buildnet import APT_TARGET, CA_TARGET, FIND_LINKS_TARGET, host_build_network, host_find_links


def test_host_settings_are_passed_and_host_paths_are_not(tmp_path):
    bundle = tmp_path / "bundle.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    environ = {"SSL_CERT_FILE": str(bundle), "https_proxy": "http://proxy.internal:3128", "NO_PROXY": "localhost",
               "PIP_EXTRA_INDEX_URL": "file:///opt/wheels https://mirror.example/simple", "PIP_FIND_LINKS": "/opt/w"}
    net = host_build_network(environ, where=tmp_path / "pub")
    binds = {target: Path(source) for source, target in net.binds}
    assert binds[CA_TARGET].read_bytes() == bundle.read_bytes()  # a published copy, reachable by path
    assert binds[CA_TARGET].parent == tmp_path / "pub" and binds[CA_TARGET].stat().st_mode & 0o444 == 0o444
    assert 'Acquire::https::CAInfo "' + CA_TARGET in binds[APT_TARGET].read_text()
    assert net.env["SSL_CERT_FILE"] == net.env["PIP_CERT"] == CA_TARGET and net.env["APT_CONFIG"] == APT_TARGET
    assert net.env["https_proxy"] == "http://proxy.internal:3128" and net.env["NO_PROXY"] == "localhost"
    assert net.env["PIP_EXTRA_INDEX_URL"] == "https://mirror.example/simple"  # the file:// part names the host
    assert "PIP_FIND_LINKS" not in net.env


def test_no_bundle_no_ca_variables(tmp_path, monkeypatch):
    import autoenvscaling.sandbox.buildnet as buildnet

    monkeypatch.setattr(buildnet, "HOST_BUNDLES", ())
    monkeypatch.setattr(buildnet, "host_apt_proxies", lambda: {})
    net = host_build_network({}, where=tmp_path)
    assert net.binds == () and "SSL_CERT_FILE" not in net.env and "APT_CONFIG" not in net.env


def test_engines_get_the_bundle_itself_and_no_apt_file(tmp_path):
    """A container engine reads the bundle into its build context as any user: nothing is published
    under the (root-only) run directory, and no APT_CONFIG points at a file the engine never mounts."""
    bundle = tmp_path / "bundle.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    net = host_build_network({"SSL_CERT_FILE": str(bundle)}, publish=False)
    assert net.binds == ((str(bundle), CA_TARGET),) and "APT_CONFIG" not in net.env
    assert net.env["SSL_CERT_FILE"] == CA_TARGET


def test_the_hosts_local_wheel_directories_are_bound_for_bwrap_builds(tmp_path):
    """find-links from the environment and from the user's pip.conf, local directories only, bound
    read-only and named in PIP_FIND_LINKS; an engine build gets none of them."""
    env_dir, conf_dir = tmp_path / "env-wheels", tmp_path / "conf-wheels"
    env_dir.mkdir()
    conf_dir.mkdir()
    (tmp_path / "home" / ".config" / "pip").mkdir(parents=True)
    (tmp_path / "home" / ".config" / "pip" / "pip.conf").write_text(
        f"[global]\nfind-links = file://{conf_dir}\n    https://wheels.example/links\n")
    environ = {"HOME": str(tmp_path / "home"), "PIP_FIND_LINKS": f"{env_dir} {tmp_path}/missing"}
    assert host_find_links(environ) == [str(env_dir), str(conf_dir)]
    net = host_build_network(environ, where=tmp_path / "pub")
    binds = {target: source for source, target in net.binds}
    assert binds[f"{FIND_LINKS_TARGET}/0"] == str(env_dir) and binds[f"{FIND_LINKS_TARGET}/1"] == str(conf_dir)
    assert net.env["PIP_FIND_LINKS"] == f"{FIND_LINKS_TARGET}/0 {FIND_LINKS_TARGET}/1"
    engine = host_build_network(environ, publish=False)
    assert "PIP_FIND_LINKS" not in engine.env and not any(t.startswith(FIND_LINKS_TARGET) for _, t in engine.binds)


def test_the_first_unreachable_host_line_is_found_in_each_tools_words():
    from autoenvscaling.sandbox.buildnet import unreachable_line

    outputs = {
        "Cloning into '.'...\nfatal: unable to access 'https://github.com/o/r.git/': Could not resolve host: github.com\n"
        "fatal: not a git repository (or any of the parent directories): .git":
            "fatal: unable to access 'https://github.com/o/r.git/': Could not resolve host: github.com",
        "--2026-12-06--  https://example.com/x.tgz\nResolving example.com (example.com)... failed: Temporary failure "
        "in name resolution.\nwget: unable to resolve host address 'example.com'":
            "Resolving example.com (example.com)... failed: Temporary failure in name resolution.",
        "npm ERR! code ENOTFOUND\nnpm ERR! network request failed": "npm ERR! code ENOTFOUND",
        "go: downloading x\ndial tcp: lookup proxy.golang.org: no such host": "dial tcp: lookup proxy.golang.org: no such host",
        "curl: (56) CONNECT tunnel failed, response 403": "curl: (56) CONNECT tunnel failed, response 403",
    }
    for output, first in outputs.items():
        assert unreachable_line(output) == first
    # A failure that is not about the network is left to the usual reason.
    assert unreachable_line("E: Unable to locate package nosuchthing\nmake: *** [all] Error 2") is None


def test_a_build_that_needs_the_internet_is_named_by_its_first_real_line(backend):
    """tests/fixtures/harbor/cause-build-needs-network: git clone from GitHub, then a git command
    that fails because of it. The reason is the clone's line; the hint says what works offline."""
    import asyncio

    import pytest
    from autoenvscaling.errors import BuildError
    from autoenvscaling.tasks import read_task

    task = read_task(Path(__file__).resolve().parents[1] / "fixtures" / "harbor" / "cause-build-needs-network")
    with pytest.raises(BuildError) as caught:
        asyncio.run(backend.prepare(task))
    first = caught.value.message.splitlines()[0]
    assert first.startswith("RUN at Dockerfile line 5 needs a host this machine cannot reach: fatal: unable to access "
                            "'https://github.com/octocat/Hello-World.git/': Could not resolve host: github.com"), first
    assert "not a git repository" in str(caught.value)  # the follow-on stays in the details
    assert "vendor what the step downloads into environment/" in (caught.value.hint or "")
