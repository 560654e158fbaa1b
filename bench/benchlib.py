"""Shared pieces of the benchmark generators: the vulnerable fetcher module of the worked
example (docs/method.md#worked-example) (its size set by the number of helper functions) and YAML string quoting."""

FRAGMENT = 'if not url.startswith("https://"):'


def fetcher(version, vulnerable, helpers):
    lines = ['"""Product media fetcher."""', "import urllib.request", ""]
    for i in range(helpers):
        lines.append(f"def helper_{i}(x):\n    return x + {i}\n")
    lines.append(f"VERSION = {version}")
    lines.append("def download(url):")
    if vulnerable:
        lines.append("    " + FRAGMENT)
        lines.append("        raise ValueError(url)")
    lines.append("    return urllib.request.urlopen(url).read()")
    return "\n".join(lines) + "\n"


def yq(s):
    """A double-quoted YAML scalar."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
