"""Ways to reach a person online: e-mail addresses (also written to dodge scrapers: at, [at],
#, 艾特, 点com), URLs (also touching Han text), accounts named after their app in either
script (微信号, 微博, 小红书, IG …) and @handles.
"""

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
            r"(?<![A-Za-z0-9_@.\-])(?:[A-Za-z0-9-]+\.)+"
            r"(?:com|cn|net|org|cc|io|top|vip|info|hk|tw|mo|me|edu|gov|xyz|ly)"
            rf"(?:/{_URL_TAIL})?(?![A-Za-z0-9_@])",
            re.IGNORECASE,
        ),
    ],
)


# An account named after its app (微信号：wx_liuyang88, 加我QQ 123456789, 抖音号dy_lin88): a
# handle is a letter then 3-29 letters, digits, _ . or -; a number is 5-11 digits. Both reach a
# person. Every major platform by its name in either script and by the words people use to
# slip past a filter: homophones (威信, 薇信, 围脖, 扣扣), a symbol for a character (薇❤, V❤),
# nicknames (企鹅 for QQ, 绿泡泡 for WeChat, 小红薯, 纸飞机 for Telegram) and initials (vx, zfb,
# xhs, dy, tg). Han words need no boundary after them; Latin ones do (line, not linear).
_HAN_APPS = (
    "微信|威信|薇信|维信|徽信|胃信|卫信|绿泡泡|QQ|扣扣|企鹅|抖音|斗音|快手|微博|围脖|钉钉|"
    "小红书|小红薯|红薯|支付宝|B站|哔哩哔哩|知乎|豆瓣|贴吧|视频号|公众号|头条|陌陌|探探|淘宝|"
    "旺旺|闲鱼|推特|脸书|电报|纸飞机|连我"
)
# The WeChat word with a letter or a symbol standing for one of its characters (V信, 薇❤).
_WECHAT_SYMBOL = r"(?:[微威薇维徽Vv][ \-·*]?(?:信|❤\ufe0f?|♥|💚|💬))"
_LATIN_APPS = (
    "vx|wx|weixin|wechat|qq|weibo|douyin|tiktok|kuaishou|xhs|dingtalk|alipay|zfb|line|"
    "whatsapp|telegram|tg|instagram|ig|facebook|fb|twitter|skype|threads|bilibili|dy|ks|wa"
)
_APP = rf"(?:{_WECHAT_SYMBOL}|{_HAN_APPS}|(?<![A-Za-z])(?:{_LATIN_APPS})(?![A-Za-z]))"
ACCOUNT_BY_APP = RegexRecognizer(
    name="account_by_app",
    gate=re.compile(r"[A-Za-z0-9]{4}"),
    type=EntityType.ID,
    patterns=[
        re.compile(
            starts_with_one_of(
                _HAN_APPS,
                _LATIN_APPS.lower(),
                _LATIN_APPS.upper(),
                "微|威|薇|维|徽|V|v",
            )
            + _APP
            + r"(?:号码|号|账号|帐号|账户|ID|id|名)?\s*(?:搜索|搜|加|是|为|:|：)?\s*"
            r"(?:(?:号码|号|账号|ID|id)\s*(?:是|为|:|：)?\s*)?@?"
            r"(?P<v>(?<![A-Za-z0-9_])(?:[A-Za-z][A-Za-z0-9_.-]{3,29}(?<!\.)|[1-9]\d{4,10}))"
            r"(?![A-Za-z0-9_-])",
            re.IGNORECASE,
        ),
        # WeChat's own account id (wxid_ and the rest) names its app wherever it stands.
        re.compile(r"(?<![A-Za-z0-9_])(?P<v>wxid_[A-Za-z0-9_-]{4,30})(?![A-Za-z0-9_-])"),
    ],
    group="v",
    validate=lambda m: None if phone_digits(m.group("v")) else EntityType.ID,  # a phone's own
)


# An e-mail address written to dodge scrapers: at, [at], (at), #, 艾特 for @; dot, [dot], 点 for
# the dot (zhang.san [at] gmail [dot] com, abc#163.com, wang艾特qq点com).
_AT = r"(?:\s?(?:@|\[at\]|\(at\)|（at）|\{at\}|<at>|【at】|艾特|圈a|#)\s?|\s(?:at|AT)\s)"
_DOT = r"(?:\s?(?:\[dot\]|\(dot\)|（dot）|\{dot\}|【dot】|点|點|。)\s?|\s(?:dot|DOT)\s|\s?\.\s?)"
OBFUSCATED_EMAIL = RegexRecognizer(
    name="obfuscated_email",
    gate=re.compile(r"@|at|AT|#|艾特|圈|dot|点|點"),
    type=EntityType.EMAIL,
    patterns=[
        re.compile(
            r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9][A-Za-z0-9._%+\-]{1,40}"
            rf"{_AT}[A-Za-z0-9\-]{{2,30}}(?:{_DOT}[A-Za-z0-9\-]{{2,30}})*?"
            rf"{_DOT}(?:com|cn|net|org|edu|gov|hk|tw|mo|io|me|cc)(?![A-Za-z])",
            re.IGNORECASE,
        )
    ],
)

# An address after a mailbox word, with or without its domain (邮箱：zhangsan2023, QQ邮箱
# 12345678): the local part alone reaches the person on the provider the word names.
EMAIL_BY_LABEL = RegexRecognizer(
    name="email_by_label",
    gate=re.compile(r"邮箱|郵箱|邮件|郵件|电邮|電郵|mail", re.IGNORECASE),
    type=EntityType.EMAIL,
    patterns=[
        re.compile(
            r"(?=[邮郵电電eE])(?:邮箱|郵箱|电子邮件|電子郵件|邮件地址|郵件地址|电邮|電郵|e-?mail)(?:地址|账号|帳號)?"
            r"\s*(?:是|为|為|:|：)?\s*"
            r"(?P<v>(?<![A-Za-z0-9_])[A-Za-z0-9][A-Za-z0-9._\-]{4,40}(?<!\.))(?![A-Za-z0-9_@])",
            re.IGNORECASE,
        )
    ],
    group="v",
)

# A handle written with its @ (关注 @dr_wang123): Latin letters first, not the host part of an
# e-mail address (a letter or digit before the @ makes it one).
HANDLE = RegexRecognizer(
    name="handle",
    gate=re.compile("@"),
    type=EntityType.ID,
    patterns=[
        re.compile(
            r"(?<![A-Za-z0-9._%+\-])@[A-Za-z][A-Za-z0-9_.]{2,29}(?<!\.)(?![A-Za-z0-9_@]|\.[A-Za-z])"
        )
    ],
)
