"""Ways to reach a person online: e-mail addresses, URLs and accounts named after their app."""

from __future__ import annotations

import re

from medrealmm.deid.recognizer import RegexRecognizer, starts_with_one_of
from medrealmm.deid.recognizers.phones import phone_digits
from medrealmm.deid.spans import EntityType

EMAIL = RegexRecognizer(
    name="email",
    gate=re.compile("@"),
    type=EntityType.EMAIL,
    patterns=[
        re.compile(
            r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
        )
    ],
)
_URL_TAIL = r"[A-Za-z0-9\-._~:/?#\[\]@!$&'*+,;=%]*[A-Za-z0-9\-_~/#=&%]"
URL = RegexRecognizer(
    name="url",
    gate=re.compile(r"\.[A-Za-z]|www", re.IGNORECASE),
    type=EntityType.URL,
    patterns=[
        re.compile(rf"(?:https?://|www\.){_URL_TAIL}", re.IGNORECASE),
        re.compile(
            r"(?<![\w@.\-])(?:[A-Za-z0-9-]+\.)+(?:com|cn|net|org|cc|io|top|vip|info)"
            rf"(?:/{_URL_TAIL})?(?![\w@])",
            re.IGNORECASE,
        ),
    ],
)


# An account named after its app (微信号：wx_liuyang88, 加我QQ 123456789): a WeChat ID is a
# letter then 5-19 letters, digits, _ or -; a QQ number is 5-11 digits. Both reach a person.
_ACCOUNT_APPS = "微信|威信|薇信|VX|WX|V信|weixin|wechat|QQ|扣扣|抖音|快手|微博|钉钉|小红书"
ACCOUNT_BY_APP = RegexRecognizer(
    name="account_by_app",
    gate=re.compile(r"[A-Za-z0-9]{5}"),
    type=EntityType.ID,
    patterns=[
        re.compile(
            starts_with_one_of(_ACCOUNT_APPS.lower(), _ACCOUNT_APPS.upper())
            + f"(?:{_ACCOUNT_APPS})"
            r"(?:号码|号|账号|帐号|ID|id)?\s*(?:是|为|:|：)?\s*"
            r"(?P<v>(?<![A-Za-z0-9_])(?:[A-Za-z][A-Za-z0-9_-]{5,19}|[1-9]\d{4,10}))"
            r"(?![A-Za-z0-9_-])",
            re.IGNORECASE,
        )
    ],
    group="v",
    validate=lambda m: None if phone_digits(m.group("v")) else EntityType.ID,  # a phone's own
)
