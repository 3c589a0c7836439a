"""URLs as input names: which names are URLs, how one is shown, the file name in one.

    is_url("https://example.org/kaggle.csv.gz?raw=1")   # True; "data/x.csv" is a path
    shown("https://ann:secret@example.org/x.csv")       # "https://ann:***@example.org/x.csv"
    file_name("https://example.org/d/kaggle.csv.gz?raw=1")   # "kaggle.csv.gz"

A name is a URL when it starts with a scheme and `://` (`https://`, `s3://`, `hf://`): no file
name a person types starts so. A password in a URL is never shown (messages, metadata, the
`source` column); the rest of the URL is, as given.
"""

import re
from urllib.parse import unquote, urlsplit

_URL = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*)://")
HTTP = ("http", "https")


def is_url(name: object) -> bool:
    """Whether `name` (a `str`; a `Path` never is: it would have lost a slash) is a URL."""
    return isinstance(name, str) and _URL.match(name) is not None


def scheme(url: str) -> str:
    """The URL's scheme, in lower case: `https`, `s3`, `hf`, ..."""
    found = _URL.match(url)
    return found.group(1).lower() if found else ""


def shown(url: str) -> str:
    """The URL as messages and metadata show it: a password replaced by `***`."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.netloc.rpartition("@")[0].partition(":")[0]
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{user}:***@{host}").geturl()


def file_name(url: str) -> str:
    """The last segment of the URL's path, decoded, without query or fragment ('' for
    `https://example.org/`)."""
    return unquote(urlsplit(url).path.rstrip("/").rpartition("/")[2])


def has_glob(url: str) -> bool:
    """Whether an fsspec URL's path holds glob characters (`*`, `?`, `[`). An HTTP URL has
    none: `?` starts its query."""
    return scheme(url) not in HTTP and bool(set("*?[") & set(url.partition("://")[2]))
