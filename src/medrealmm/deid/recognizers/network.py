"""IP addresses (v4 and v6): HIPAA names them; a log line or a screenshot of a router page
puts one in a consultation. Typed as [URL], the online artefact they are.

Candidates are validated by the standard library's ``ipaddress``: four octets of 0-255 (a
version number or a dotted date has three parts or an octet over 255), or eight hex groups
or a ``::`` (a clock time has neither).
"""

from __future__ import annotations

import ipaddress
import re

from medrealmm.deid.recognizer import RegexRecognizer
from medrealmm.deid.spans import EntityType


def _valid_ip(match: re.Match[str]) -> EntityType | None:
    try:
        ipaddress.ip_address(match.group("ip"))
    except ValueError:
        return None
    return EntityType.URL


IP_ADDRESS = RegexRecognizer(
    name="ip_address",
    gate=re.compile(r"\d\.\d{1,3}\.\d{1,3}\.\d|::|[0-9A-Fa-f]:[0-9A-Fa-f]{1,4}:"),
    type=EntityType.URL,
    patterns=[
        # v4, with a port or a prefix length after it (10.0.0.8:8080, 192.168.1.0/24)
        re.compile(r"(?<![\d.])(?P<ip>\d{1,3}(?:\.\d{1,3}){3})(?::\d{1,5}|/\d{1,2})?(?![\d.]*\d)"),
        # v6: hex groups with at least two colons, not inside a longer word
        re.compile(
            r"(?<![0-9A-Za-z:])(?P<ip>(?=[0-9A-Fa-f:]*:[0-9A-Fa-f]*:)[0-9A-Fa-f:]{2,39}"
            r"(?:%\w+)?)(?:/\d{1,3})?(?![0-9A-Za-z:])"
        ),
    ],
    validate=_valid_ip,
)
