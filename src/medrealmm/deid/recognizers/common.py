"""What the recognizer modules share: the Han character class, the characters that end a
proper noun when a pattern scans left from a suffix (医院, 区), and the common-word test.
"""

from __future__ import annotations

CJK = "\u4e00-\u9fff"
# Characters that end a proper noun when scanning left from a suffix such as 医院 or 区.
STOP = "在去到从于了的是与及或跟把被给向往来回我你他她们这那个也都就还又再说看住家过请问有没想"
# Institution names hold 家, 都, 回 … (张家港, 成都): only plain function words end them.
HOSPITAL_STOP = "在去到从于了的是与及或跟把被给向往我你他她们这那也就还又再说看请问有没想离住"
# Addresses also stop at 省 and 市: the city itself is kept, only sub-city units are masked.
ADDRESS_STOP = STOP + "省市"


def cjk_proper(lo: int, hi: int, stop: str = STOP, not_in: str = "") -> str:
    guard = f"(?!{not_in})" if not_in else ""
    return f"(?:{guard}(?![{stop}])[{CJK}0-9]){{{lo},{hi}}}"


def common_word(word: str) -> bool:
    from medrealmm.deid.names import is_common_word  # jieba's dictionary, loaded on first use

    return is_common_word(word)


def word_tag(word: str) -> str | None:
    from medrealmm.deid.names import word_tag as tag  # jieba's dictionary, loaded on first use

    return tag(word)
