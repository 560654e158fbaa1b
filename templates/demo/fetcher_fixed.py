"""Download product photos that sellers link to, for the catalogue preview."""
import urllib.request

MAX_BYTES = 5 * 1024 * 1024


def download_preview(url: str) -> bytes:
    """Fetch the image at `url` and return at most MAX_BYTES of it."""
    if not url.startswith("https://"):
        raise ValueError("only https:// URLs may be downloaded")
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.read(MAX_BYTES)
