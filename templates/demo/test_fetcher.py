import pytest

from media.fetcher import download_preview


def test_rejects_plain_http():
    with pytest.raises(ValueError):
        download_preview("http://example.com/a.png")
