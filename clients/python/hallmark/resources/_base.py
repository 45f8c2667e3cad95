from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._client import BaseClient


def body_of(**values: Any) -> dict[str, Any]:
    """A JSON body of the given wire-named fields, leaving out the ones that are None."""
    return {name: value for name, value in values.items() if value is not None}


class Resource:
    def __init__(self, client: BaseClient) -> None:
        self._client = client
