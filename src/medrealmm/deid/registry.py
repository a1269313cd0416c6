"""The recognizer registry: one small recognizer per identifier family, as Presidio does it.

Which recognizers run is this module's one explicit list; nothing registers itself on import.
A caller that wants a different set builds its own ``Registry`` (tests drop the NER model,
an evaluation compares rules alone with rules + NER).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from medrealmm.deid import latin_names, names, ner, organizations, unlisted_names
from medrealmm.deid.recognizer import Recognizer
from medrealmm.deid.recognizers import (
    addresses,
    contact,
    dates,
    devices,
    finance,
    ids,
    institutions,
    labelled_fields,
    network,
    phones,
    places,
    records,
    vehicles,
)


class Registry:
    """An ordered, name-unique set of recognizers."""

    def __init__(self, recognizers: Iterable[Recognizer] = ()) -> None:
        self._by_name: dict[str, Recognizer] = {}
        for recognizer in recognizers:
            self.add(recognizer)

    def add(self, recognizer: Recognizer) -> None:
        if recognizer.name in self._by_name:
            raise ValueError(f"recognizer {recognizer.name!r} registered twice")
        self._by_name[recognizer.name] = recognizer

    def get(self, name: str) -> Recognizer:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no recognizer {name!r}; known: {sorted(self._by_name)}") from None

    def without(self, *excluded: str) -> Registry:
        return Registry(r for r in self if r.name not in excluded)

    @property
    def names(self) -> list[str]:
        return list(self._by_name)

    def __iter__(self) -> Iterator[Recognizer]:
        return iter(list(self._by_name.values()))

    def __len__(self) -> int:
        return len(self._by_name)


def rule_recognizers() -> list[Recognizer]:
    """Rules: structured identifiers, dates, addresses, hospitals, names by context. One
    block per module of ``recognizers``; docs/DEIDENTIFICATION.md maps categories to them."""
    return [
        ids.RESIDENT_ID,
        ids.REGIONAL_ID,
        ids.PASSPORT_SHAPE,
        ids.DOCUMENT_BY_LABEL,
        ids.STARRED_NUMBER,
        phones.PHONE_ANY_SHAPE,
        phones.LANDLINE_PHONE,
        phones.PHONE_BY_CONTEXT,
        phones.PHONE_IN_ANY_LAYOUT,
        phones.INTERNATIONAL_PHONE,
        phones.FOREIGN_LAYOUT_PHONE,
        contact.EMAIL,
        contact.OBFUSCATED_EMAIL,
        contact.EMAIL_BY_LABEL,
        contact.URL,
        contact.ACCOUNT_BY_APP,
        contact.HANDLE,
        network.IP_ADDRESS,
        finance.BANK_CARD,
        finance.CARD_BY_LABEL,
        records.NUMBER_BY_KEYWORD,
        records.PREFIXED_NUMBER,
        records.LONG_NUMBER,
        records.LICENCE_NUMBER,
        records.FAX_NUMBER,
        labelled_fields.LABELLED_FIELD,
        devices.DEVICE_SERIAL,
        devices.MAC_ADDRESS,
        vehicles.LICENSE_PLATE,
        vehicles.PLATE_BY_LABEL,
        dates.FULL_DATE,
        dates.FULL_DATE_CHINESE_NUMERALS,
        dates.ENGLISH_DATE,
        dates.BIRTH_DATE_IN_PART,
        dates.MONTH_DAY,
        dates.YEAR_MONTH,
        dates.NUMERIC_MONTH_DAY,
        dates.ROC_DATE,
        dates.AGE_OVER_89,
        dates.LUNAR_DATE,
        dates.FESTIVAL_DATE,
        institutions.HOSPITAL,
        institutions.HOSPITAL_SHORT,
        institutions.FAMOUS_HOSPITAL,
        institutions.ORDINAL_HOSPITAL,
        institutions.HOSPITAL_BRANCH,
        addresses.ADDRESS,
        addresses.ADDRESS_BY_CUE,
        addresses.ADDRESS_HOUSE_NUMBER,
        addresses.ROAD_NUMBER,
        addresses.HEADED_ROAD,
        addresses.ESTATE_UNIT,
        addresses.TRADITIONAL_DISTRICT,
        addresses.ESTATE_BY_CUE,
        places.DASHED_UNIT,
        places.HK_ESTATE_FLAT,
        places.COORDINATES,
        places.LANDMARK_NEAR_HOME,
        places.SCHOOL_CLASS,
        names.ContextNameRecognizer(),
        names.DottedNameRecognizer(),
        names.HandleAndNicknameRecognizer(),
        names.JiebaNameRecognizer(),
        unlisted_names.UnlistedFullNameRecognizer(),
        unlisted_names.NamedAsRecognizer(),
        latin_names.LatinNameRecognizer(),
        latin_names.EnglishIntroductionRecognizer(),
        organizations.OrganizationRecognizer(),
    ]


def model_recognizers() -> list[Recognizer]:
    """Statistical recognizers: Baidu LAC's NER for what no rule covers (free-form names,
    organisations, places)."""
    return [ner.LacNerRecognizer()]


def default_registry() -> Registry:
    """A fresh registry of every recognizer the text pass runs: rules, then the NER model."""
    return Registry([*rule_recognizers(), *model_recognizers()])


def rules_registry() -> Registry:
    """The rules alone (no model): for comparisons and fast unit tests."""
    return Registry(rule_recognizers())
