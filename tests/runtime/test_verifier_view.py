"""The verifier-view planner, pure logic: each rule that hides an agent change, the changes it must
keep visible (the agent's legitimate work), and the agent_paths / view="agent" escapes."""

from __future__ import annotations

import pytest

from autoenvscaling.runtime.verifier_view import FileChange, ImageIndex, plan_view, plugin_entry_points

SITE = "/usr/lib/python3/dist-packages"
INDEX = ImageIndex(
    path_dirs=("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", "/opt/venv/bin"),
    executables=frozenset({"python3", "bash", "pytest", "tar", "sh"}),
    python_dirs=("/usr/lib/python311.zip", "/usr/lib/python3.11", "/usr/local/lib/python3.11/dist-packages",
                 SITE, "/root/.local/lib/python3.11/site-packages", "/opt/venv/lib/python3.11/site-packages"),
    modules=frozenset({"json", "pytest", "_pytest", "os", "numpy"}),
)


def added(path: str, is_dir: bool = False) -> FileChange:
    return FileChange(path=path, kind="added", is_dir=is_dir)


def plan(*changes: FileChange, **kw):
    return plan_view(kw.pop("view", "protected"), changes, INDEX, workdir=kw.pop("workdir", "/app"), **kw)


@pytest.mark.parametrize("change", [
    FileChange(path="/usr/bin/python3", kind="modified"),
    FileChange(path="/bin/bash", kind="modified"),
    FileChange(path="/usr/bin/pytest", kind="deleted"),
    FileChange(path="/usr/lib/x86_64-linux-gnu/libc.so.6", kind="modified"),
    FileChange(path="/etc/ld.so.cache", kind="modified"),
    FileChange(path="/etc/alternatives/python", kind="modified"),
    FileChange(path="/etc/nsswitch.conf", kind="modified"),
    FileChange(path="/etc/python3.11/sitecustomize.py", kind="modified"),
    FileChange(path="/opt/venv/bin/python", kind="modified"),  # the image's PATH dir, outside /usr
    FileChange(path=f"{SITE}/_pytest", kind="modified", is_dir=True, replaced=True),  # an opaque dir
    FileChange(path="/usr/lib/python3.11", kind="deleted"),  # a whole directory removed
])
def test_modified_and_deleted_image_files_under_protected_trees_are_restored(change):
    assert plan(change).restore == {change.path: "replaces an image file"}


def test_a_directory_whose_contents_changed_is_not_restored_wholesale():
    """dpkg adding /usr/bin/hello modifies /usr/bin (a copied-up dir): restoring it would hide the package."""
    changes = [FileChange(path="/usr/bin", kind="modified", is_dir=True), added("/usr/bin/hello")]
    assert plan(*changes).restore == {}


def test_replacing_an_ancestor_of_a_protected_tree_is_restored():
    # /opt is not protected, but making it a symlink would redirect /opt/venv/bin
    assert plan(FileChange(path="/opt", kind="modified", replaced=True)).restore == {
        "/opt": "replaces an ancestor of a protected tree"}
    assert plan(FileChange(path="/opt", kind="modified", is_dir=True)).restore == {}


@pytest.mark.parametrize("path, why", [
    (f"{SITE}/evil.pth", "Python start-up hook"),
    ("/usr/local/lib/python3.11/dist-packages/sitecustomize.py", "Python start-up hook"),
    ("/root/.local/lib/python3.11/site-packages/usercustomize.py", "Python start-up hook"),
    ("/srv/other/site-packages/x.pth", "Python start-up hook"),  # any site-packages dir
    ("/app/__pycache__/main.cpython-311.pyc", "compiled Python (recompiled from source)"),
    ("/etc/ld.so.preload", "dynamic-loader configuration"),
    ("/etc/ld.so.conf.d/evil.conf", "dynamic-loader configuration"),
    ("/conftest.py", "pytest configuration in an ancestor of /tests"),
    ("/pytest.ini", "pytest configuration in an ancestor of /tests"),
    ("/pyproject.toml", "pytest configuration in an ancestor of /tests"),
    ("/usr/local/bin/python3", "shadows an image program"),
    ("/usr/local/bin/tar", "shadows an image program"),
    ("/usr/local/lib/python3.11/dist-packages/pytest", "shadows an image Python module"),
    ("/usr/local/lib/python3.11/dist-packages/json.py", "shadows an image Python module"),
    ("/usr/local/lib/python3.11/dist-packages/numpy.cpython-311-x86_64-linux-gnu.so", "shadows an image Python module"),
    ("/app/json.py", "shadows an image Python module"),  # the verifier's working directory
    # a home the agent made root's in /etc/passwd: its user site and ~/.local/bin come first
    ("/srv/evil/.local/lib/python3.11/site-packages/pytest", "shadows an image Python module"),
    ("/srv/evil/.local/bin/pytest", "shadows an image program"),
    ("/root/.local/bin/python3", "shadows an image program"),
    ("/usr/lib/x86_64-linux-gnu/libnss_evil.so.2", "a module the C library loads by name"),
    ("/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.d/evil.conf", "a module the C library loads by name"),
])
def test_added_code_that_runs_by_itself_or_shadows_the_image_is_removed(path, why):
    assert plan(added(path)).restore == {path: why}


@pytest.mark.parametrize("path", [
    "/usr/bin/hello",  # a new program from a package the agent installed
    "/usr/local/bin/mytool",
    f"{SITE}/requests",  # a new Python package
    f"{SITE}/flask/json",  # a package's own submodule named like a top-level one
    "/srv/evil/.local/lib/python3.11/site-packages/flask/json.py",
    "/etc/hosts", "/etc/passwd", "/home/alice/.bashrc", "/var/lib/dpkg/status",
    "/app/solution.py", "/app/json.py.bak", "/tests.txt",
    "/srv/conftest.py", "/app/pytest.ini",  # not an ancestor of /tests
    "/app/notes.pth",  # not a site directory
])
def test_the_agents_legitimate_work_stays_visible(path):
    assert plan(added(path), FileChange(path="/etc/hosts", kind="modified")).restore == {}


def test_parents_first_and_paths_under_a_restored_one_are_dropped():
    changes = [FileChange(path="/usr/lib/python3.11/json/__init__.py", kind="modified"),
               FileChange(path="/usr/lib/python3.11", kind="deleted"),
               FileChange(path="/bin/bash", kind="modified")]
    assert list(plan(*changes).restore) == ["/bin/bash", "/usr/lib/python3.11"]


def test_agent_paths_keep_changes_visible_and_are_counted():
    changes = [FileChange(path="/usr/bin/python3", kind="modified"), added(f"{SITE}/dev.pth")]
    result = plan(*changes, agent_paths=["/usr/bin/python3", SITE + "/"])
    assert result.restore == {} and result.kept_by_agent_paths == 2


def test_view_agent_keeps_everything():
    result = plan(FileChange(path="/usr/bin/python3", kind="modified"), added("/etc/ld.so.preload"), view="agent")
    assert result.view == "agent" and result.restore == {} and result.entry_points == ()


def test_added_entry_points_are_read_and_only_pytest11_ones_removed():
    result = plan(added(f"{SITE}/evil-1.0.dist-info/entry_points.txt"),
                  added("/usr/local/lib/python3.11/dist-packages/tool-2.egg-info/entry_points.txt"),
                  added(f"{SITE}/plain/entry_points.txt"))  # not in a *.dist-info: not metadata
    assert result.entry_points == (f"{SITE}/evil-1.0.dist-info/entry_points.txt",
                                   "/usr/local/lib/python3.11/dist-packages/tool-2.egg-info/entry_points.txt")
    contents = {"a": b"[pytest11]\nevil = evil_plugin\n", "b": b"[console_scripts]\ntool = tool:main\n",
                "c": b"[pytest11\nbroken", "d": None}
    assert plugin_entry_points(contents) == ["a", "c"]


def test_protected_trees_include_the_images_own_dirs():
    trees = INDEX.protected_trees()
    assert "/usr" in trees and "/etc/ld.so.preload" in trees and "/opt/venv/bin" in trees
    assert "/opt/venv/lib/python3.11/site-packages" in trees


def test_the_index_script_lists_path_dirs_programs_and_python_modules(tmp_path):
    """INDEX_SCRIPT run by a real sh: a PATH dir that does not exist yet is still listed (an agent
    could create it ahead of the real one), and each python found lists its sys.path modules."""
    import os
    import subprocess
    import sys

    from autoenvscaling.runtime.verifier_view import INDEX_SCRIPT, parse_index

    bin_dir, lib = tmp_path / "bin", tmp_path / "lib"
    bin_dir.mkdir()
    lib.mkdir()
    (bin_dir / "tool").write_text("#!/bin/sh\n")
    (bin_dir / "python3").symlink_to(sys.executable)
    (lib / "aes_probe_mod.py").write_text("")
    (lib / "aes_probe_ext.cpython-311-x86_64-linux-gnu.so").write_text("")
    missing = tmp_path / "missing"
    env = {"PATH": f"{missing}:{bin_dir}:/usr/bin:/bin", "PYTHONPATH": str(lib), "HOME": str(tmp_path)}
    out = subprocess.run(["sh", "-c", INDEX_SCRIPT], capture_output=True, text=True, env=env, check=True).stdout
    index = parse_index(out)
    assert index.path_dirs[:2] == (str(missing), str(bin_dir)) and "/usr/bin" in index.path_dirs
    assert {"tool", "python3", "sh"} <= index.executables
    assert str(lib) in index.python_dirs and os.path.dirname(os.__file__) in index.python_dirs
    assert {"aes_probe_mod", "aes_probe_ext", "json", "os"} <= index.modules
    assert str(missing) in index.protected_trees()


# -- modules the tests do not import (optional-import plants) ---------------------------------------
from autoenvscaling.runtime.verifier_view import (dependency_closure, dist_modules, dist_requires,  # noqa: E402
                                                  verifier_imports)


@pytest.mark.parametrize("path", [
    f"{SITE}/defusedxml.py",                                   # openpyxl imports it when present
    "/usr/local/lib/python3.11/dist-packages/simplejson.py",
    "/root/.local/lib/python3.11/site-packages/ujson.cpython-311-x86_64-linux-gnu.so",
    "/app/orjson.py",                                          # the verifier's working directory
])
def test_an_added_module_the_tests_do_not_import_is_removed(path):
    assert plan(added(path), imported={"openpyxl"}).restore == {path: "a Python module the tests do not import"}
    # The positive control: the same plant without the rule (imported=None, the old planner) stays.
    assert plan(added(path)).restore == {}


def test_an_added_package_counts_when_it_holds_code_and_a_data_directory_does_not():
    pkg = [added(f"{SITE}/defusedxml", is_dir=True), added(f"{SITE}/defusedxml/ElementTree.py")]
    assert plan(*pkg, imported=set()).restore == {f"{SITE}/defusedxml": "a Python module the tests do not import"}
    data = [added("/app/results", is_dir=True), added("/app/results/summary.csv"), added("/app/notes.txt")]
    assert plan(*data, imported=set()).restore == {}


def test_an_added_module_the_tests_import_stays_visible():
    changes = [added(f"{SITE}/requests", is_dir=True), added(f"{SITE}/requests/__init__.py"),
               added("/app/solution.py")]
    result = plan(*changes, imported={"requests", "solution"})
    assert result.restore == {}
    assert result.imported_added == ("requests", "solution")


def test_verifier_imports_reads_statements_commands_and_paths():
    files = {
        "test_outputs.py": b"import os, json as j\nfrom openpyxl import load_workbook\nimport numpy.linalg\n",
        "test.sh": b"cd /app && python3 -m pytest /tests -q\npython3 -c 'import yaml; print(1)'\n"
                   b"python3 /app/solve.py\nuvx --with requests pytest\n",
        "loader.py": b"importlib.import_module('kernels')\n",
        "blob.bin": b"\0import defusedxml",
    }
    names = verifier_imports(files, declared=["extra.sub"])
    assert {"os", "json", "openpyxl", "numpy", "pytest", "yaml", "solve", "kernels", "extra"} <= names
    assert "defusedxml" not in names and "requests" not in names


def test_the_dependencies_of_an_imported_package_follow_its_metadata():
    dists = {
        f"{SITE}/requests-2.32.0.dist-info": ("requests", {"requests"}, dist_requires(
            "Name: requests\nRequires-Dist: urllib3<3,>=1.21.1\nRequires-Dist: idna (>=2.5)\n")),
        f"{SITE}/urllib3-2.2.0.dist-info": ("urllib3", dist_modules("urllib3/__init__.py,sha256=x,1\n", None), set()),
        f"{SITE}/idna-3.7.dist-info": ("idna", {"idna"}, set()),
        f"{SITE}/defusedxml-0.7.dist-info": ("defusedxml", {"defusedxml"}, set()),  # installed, never required
    }
    assert dependency_closure({"requests"}, dists) == {"requests", "urllib3", "idna"}
    assert dependency_closure(set(), dists) == set()


# -- the outputs view: the pristine image plus the declared outputs ---------------------------------
def test_the_outputs_view_keeps_only_declared_outputs_and_their_directories():
    changes = [
        FileChange(path="/app", kind="modified", is_dir=True),
        added("/app/out", is_dir=True), added("/app/out/report.xlsx"),
        added("/app/scratch.txt"),
        FileChange(path="/etc/hosts", kind="modified"),
        added("/root/.cache", is_dir=True), added("/root/.cache/pip/x"),
        FileChange(path="/root", kind="modified", is_dir=True),
        FileChange(path="/srv/data.csv", kind="deleted"),
        added("/logs/agent/trace.txt"),
    ]
    result = plan(*changes, view="outputs", outputs=["/app/out/report.xlsx"], imported=set())
    assert result.restore == {"/app/scratch.txt": "not a declared output", "/etc/hosts": "not a declared output",
                              "/root/.cache": "not a declared output", "/srv/data.csv": "not a declared output"}
    # The same changes under the protected view stay visible: the control for each hidden one.
    assert plan(*changes, imported=set()).restore == {}


def test_the_outputs_view_keeps_a_working_directory_the_engine_made_but_not_what_is_in_it():
    """The image lacked /srv/work, so the engine made it at start: removing it would leave the verifier
    without its working directory. What the agent put in it is still hidden."""
    changes = [added("/srv", is_dir=True), added("/srv/work", is_dir=True), added("/srv/work/notes.txt"),
               added("/srv/work/sub", is_dir=True)]
    result = plan(*changes, view="outputs", outputs=["/out/result.txt"], workdir="/srv/work", imported=set())
    assert result.restore == {"/srv/work/notes.txt": "not a declared output", "/srv/work/sub": "not a declared output"}
    # Control: any other directory the agent made goes.
    assert plan(*changes, view="outputs", outputs=["/out/result.txt"], workdir="/app", imported=set()).restore == {
        "/srv": "not a declared output"}


def test_a_symlink_on_the_way_to_an_output_is_put_back():
    changes = [FileChange(path="/app", kind="modified", is_dir=False, replaced=True), added("/app/out.csv")]
    assert plan(*changes, view="outputs", outputs=["/app/out.csv"], imported=set()).restore == {
        "/app": "not a declared output"}


def test_the_protected_rules_hold_inside_the_outputs():
    changes = [added("/app/defusedxml.py"), added("/app/answer.py"), added("/app/json.py")]
    result = plan(*changes, view="outputs", outputs=["/app"], imported={"answer"})
    assert result.restore == {"/app/defusedxml.py": "a Python module the tests do not import",
                              "/app/json.py": "shadows an image Python module"}
