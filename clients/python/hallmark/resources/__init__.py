"""The API's operations grouped by area, as `Hallmark` exposes them (hallmark.codes, hallmark.keys, ...)."""

from .accounts import Accounts, Gtins
from .auction import Auction
from .codes import Codes
from .compliance import Compliance
from .keys import Keys
from .misc import Account, Links, Schemas, System, Usage
from .scans import Blocklist, Scans
from .webhooks import Webhooks

__all__ = [
    "Account",
    "Accounts",
    "Auction",
    "Blocklist",
    "Codes",
    "Compliance",
    "Gtins",
    "Keys",
    "Links",
    "Scans",
    "Schemas",
    "System",
    "Usage",
    "Webhooks",
]
