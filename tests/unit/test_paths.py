"""Names from manifests and scheduler output stay inside the operator's folder."""
import os

import pytest

from jobs_ingest.core.paths import OutsideRoot, resolve_inside


@pytest.fixture
def root(tmp_path):
    (tmp_path / "logs" / "sub").mkdir(parents=True)
    (tmp_path / "logs" / "sub" / "a.log").write_text("ok\n")
    (tmp_path / "secret.txt").write_text("secret\n")
    return tmp_path / "logs"


def test_a_relative_name_inside_resolves(root):
    assert resolve_inside(root, "sub/a.log") == (root / "sub" / "a.log").resolve()
    assert resolve_inside(root, "sub/../sub/a.log") == (root / "sub" / "a.log").resolve()


@pytest.mark.parametrize("name", ["../secret.txt", "sub/../../secret.txt", "../../../../../etc/os-release"])
def test_dot_dot_escapes_are_refused(root, name):
    with pytest.raises(OutsideRoot, match="outside"):
        resolve_inside(root, name)


def test_absolute_names_are_refused_even_inside(root):
    for name in ("/etc/os-release", str(root / "sub" / "a.log")):
        with pytest.raises(OutsideRoot, match="absolute"):
            resolve_inside(root, name)


def test_symlinks_that_leave_the_folder_are_refused(root):
    os.symlink(root.parent / "secret.txt", root / "link.log")
    os.symlink(root.parent, root / "up")
    for name in ("link.log", "up/secret.txt"):
        with pytest.raises(OutsideRoot, match="outside"):
            resolve_inside(root, name)
    with pytest.raises(OutsideRoot):
        resolve_inside(root, root / "link.log", found_under_root=True)


def test_symlinks_inside_the_folder_are_fine(root):
    os.symlink(root / "sub" / "a.log", root / "inner.log")
    assert resolve_inside(root, "inner.log") == (root / "sub" / "a.log").resolve()
    assert resolve_inside(root, root / "inner.log", found_under_root=True) == (root / "sub" / "a.log").resolve()
