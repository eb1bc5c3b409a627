"""Typed registrars: who registered what, duplicates, names, base classes, lazy import paths."""

from __future__ import annotations

import sys
import textwrap
from types import SimpleNamespace

import pytest

from autoenvscaling.errors import PluginError
from autoenvscaling.plugins import hookimpl
from autoenvscaling.plugins.host import PluginHost
from autoenvscaling.testing.toy import ToyDomain


def domains_plugin(**entries: object) -> SimpleNamespace:
    """A plugin object whose domains hook registers ``entries`` (name -> class or import path)."""

    @hookimpl
    def autoenvscaling_register_domains(registrar):  # noqa: ANN001
        for name, target in entries.items():
            registrar.add(name.replace("_", "-"), target)

    return SimpleNamespace(autoenvscaling_register_domains=autoenvscaling_register_domains)


def test_entries_record_the_registering_plugin(aes_host, aes_register):
    aes_register(domains_plugin(toy=ToyDomain), name="kit-toy")
    entry = aes_host.domains.entry("toy")
    assert entry.plugin == "kit-toy"
    assert aes_host.domains.get("toy") is ToyDomain
    assert entry.description == ToyDomain.__doc__.splitlines()[0]
    # The built-ins are recorded as the core's own plugin.
    assert aes_host.sandbox_backends.entry("bwrap").plugin == "autoenvscaling.plugins.builtin"
    infos = {p.name: p for p in aes_host.plugins()}
    assert infos["kit-toy"].hooks == ["autoenvscaling_register_domains"]
    assert infos["autoenvscaling.plugins.builtin"].builtin


def test_duplicate_name_fails_naming_both_plugins(aes_host, aes_register):
    aes_register(domains_plugin(toy=ToyDomain), name="first-plugin")
    aes_register(domains_plugin(toy=ToyDomain), name="second-plugin")
    with pytest.raises(PluginError) as err:
        aes_host.domains.names()
    assert "'toy' registered twice" in err.value.message
    assert "first-plugin" in err.value.message and "second-plugin" in err.value.message
    assert "AUTOENVSCALING_DISABLE_PLUGINS" in err.value.hint


def test_duplicate_name_fail_soft_keeps_the_first_and_skips_the_second_whole():
    host = PluginHost(strict=False)
    host.load_builtins()
    host.register(domains_plugin(toy=ToyDomain), name="first-plugin")
    # The second plugin's "extra" entry comes before its clash: it is dropped too, never half a plugin.
    host.register(domains_plugin(extra="somewhere.else:Extra", toy="somewhere.else:Domain"), name="second-plugin")
    with pytest.warns(UserWarning, match="second-plugin"):
        assert host.domains.names() == ["toy"]
    assert host.domains.entry("toy").plugin == "first-plugin"
    assert [p.plugin for p in host.problems] == ["second-plugin"]


def test_a_plugin_cannot_take_a_builtin_name(aes_host, aes_register):
    @hookimpl
    def autoenvscaling_register_agents(registrar):  # noqa: ANN001
        registrar.add("oracle", "my_agents:Oracle")

    aes_register(SimpleNamespace(autoenvscaling_register_agents=autoenvscaling_register_agents), name="greedy")
    with pytest.raises(PluginError, match=r"by autoenvscaling.plugins.builtin and by greedy"):
        aes_host.agents.names()


@pytest.mark.parametrize("bad", ["Toy", "", "1toy", "to y", "toy/x", "x" * 64])
def test_invalid_names_are_rejected(aes_host, aes_register, bad):
    @hookimpl
    def autoenvscaling_register_domains(registrar):  # noqa: ANN001
        registrar.add(bad, ToyDomain)

    aes_register(SimpleNamespace(autoenvscaling_register_domains=autoenvscaling_register_domains), name="bad-names")
    with pytest.raises(PluginError, match="invalid name"):
        aes_host.domains.names()


@pytest.mark.parametrize("target", [dict, ToyDomain(), 42, "no_colon_path"])
def test_wrong_targets_are_rejected(aes_host, aes_register, target):
    aes_register(domains_plugin(thing=target), name="wrong-kind")
    with pytest.raises(PluginError, match=r"not a Domain subclass|must look like 'pkg.mod:Name'"):
        aes_host.domains.names()


def test_import_paths_resolve_lazily(aes_host, aes_register, tmp_path, monkeypatch):
    (tmp_path / "aes_lazy_domain.py").write_text(textwrap.dedent("""
        from autoenvscaling.testing.toy import ToyDomain

        class LazyDomain(ToyDomain):
            name = "lazy"

        class NotADomain:
            pass
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    aes_register(domains_plugin(lazy="aes_lazy_domain:LazyDomain", odd="aes_lazy_domain:NotADomain",
                                gone="aes_lazy_domain:Missing"), name="lazy-plugin")
    assert aes_host.domains.names() == ["gone", "lazy", "odd"]
    assert "aes_lazy_domain" not in sys.modules, "registering by path must not import the module"
    try:
        cls = aes_host.domains.get("lazy")
        assert cls.__name__ == "LazyDomain" and cls.name == "lazy"
        assert "aes_lazy_domain" in sys.modules
        with pytest.raises(PluginError, match="is not a Domain"):
            aes_host.domains.get("odd")
        with pytest.raises(PluginError, match="aes_lazy_domain:Missing does not exist"):
            aes_host.domains.get("gone")
    finally:
        sys.modules.pop("aes_lazy_domain", None)


def test_missing_module_names_the_pip_extra(aes_host, aes_register, tmp_path, monkeypatch):
    # A backend module that exists but needs a dependency that is not installed.
    (tmp_path / "aes_heavy_backend.py").write_text("import aes_dependency_not_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    @hookimpl
    def autoenvscaling_register_sandbox_backends(registrar):  # noqa: ANN001
        registrar.add("heavy", "aes_heavy_backend:HeavyBackend", extra="heavy")
        registrar.add("absent", "aes_module_not_installed:Backend")

    aes_register(SimpleNamespace(autoenvscaling_register_sandbox_backends=autoenvscaling_register_sandbox_backends),
                 name="heavy-plugin")
    with pytest.raises(PluginError) as err:
        aes_host.sandbox_backends.get("heavy")
    assert err.value.message == "'heavy' (from plugin heavy-plugin) needs a missing module: aes_dependency_not_installed"
    assert err.value.hint == "pip install 'autoenvscaling[heavy]'"
    with pytest.raises(PluginError) as err:
        aes_host.sandbox_backends.get("absent")
    assert "aes_module_not_installed" in err.value.message
    assert err.value.hint == "check the plugin's installation"


def test_unknown_name_lists_what_is_known(aes_host):
    with pytest.raises(PluginError) as err:
        aes_host.agents.get("orakle")
    known = ", ".join(aes_host.agents.names())
    assert "nop, oracle" in known
    assert err.value.message == f"unknown agent 'orakle' (known: {known})"
