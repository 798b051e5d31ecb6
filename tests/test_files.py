"""Files renamed into place: the mode of any new file, and nothing left behind on failure."""

import os

import pytest

from gdelt_forecast.ground.files import DIR_MODE, FILE_MODE, replacing, temporary_folder


def test_the_modes_follow_the_umask():
    mask = os.umask(0o022)
    os.umask(mask)
    assert (0o666 & ~mask, 0o777 & ~mask) == (FILE_MODE, DIR_MODE)


def test_a_replaced_file_has_the_new_file_mode_and_no_temporary_stays(tmp_path):
    target = tmp_path / "deep" / "out.txt"
    with replacing(target) as tmp:
        assert tmp.parent == target.parent and tmp.stat().st_mode & 0o777 == FILE_MODE
        tmp.write_text("done")
    assert target.read_text() == "done" and target.stat().st_mode & 0o777 == FILE_MODE
    with pytest.raises(RuntimeError), replacing(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("the writer failed")
    assert target.read_text() == "done"  # the old file stays whole
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.txt"]


def test_a_temporary_folder_has_the_new_folder_mode(tmp_path):
    folder = temporary_folder(tmp_path, prefix=".release.")
    assert folder.parent == tmp_path and folder.stat().st_mode & 0o777 == DIR_MODE
