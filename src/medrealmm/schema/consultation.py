"""The consultation trajectory C = (e_1..e_T) of paper section 3.1."""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Sender(StrEnum):
    PATIENT = "patient"
    PHYSICIAN = "physician"


class ImageOrigin(StrEnum):
    """Who put the image into the dialogue; decided from platform metadata, never guessed."""

    PATIENT = "patient"
    PHYSICIAN = "physician"
    PLATFORM = "platform"


class ImageKind(StrEnum):
    MEDICAL = "medical"
    STICKER = "sticker"
    EMOJI = "emoji"


class Modality(StrEnum):
    TEXT = "text"
    IMAGE = "image"


class ImageRef(BaseModel):
    """An image attached to an event, stored by path relative to the dataset root."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1)
    origin: ImageOrigin
    kind: ImageKind = ImageKind.MEDICAL
    category: str | None = Field(
        default=None, description="Free label such as lab_report, skin, prescription, ct_film."
    )
    sha256: str | None = None

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        if value.startswith("/") or ".." in value.replace("\\", "/").split("/"):
            raise ValueError("image path must be relative to the dataset root and stay inside it")
        return value

    @property
    def is_patient_medical(self) -> bool:
        return self.origin is ImageOrigin.PATIENT and self.kind is ImageKind.MEDICAL


_EPOCH = re.compile(r"\s*[-+]?\d+(\.\d*)?\s*")


class Event(BaseModel):
    """One event e_t = (content, modalities, sender, timestamp)."""

    model_config = ConfigDict(extra="forbid")

    sender: Sender
    timestamp: datetime
    content: str = ""
    images: list[ImageRef] = Field(default_factory=list)

    @field_validator("timestamp", mode="before")
    @classmethod
    def _iso_only(cls, value: object) -> object:
        """An epoch number says neither its unit (s or ms) nor the clock the platform kept,
        and would come out as UTC beside local times: only ISO 8601 text is read."""
        if isinstance(value, str) and ":" in value:
            return value  # a time of day: never a number (this runs for every event read)
        if isinstance(value, int | float) or (isinstance(value, str) and _EPOCH.fullmatch(value)):
            raise ValueError(
                f"{value!r} is a number; give an ISO 8601 date-time such as "
                "2025-06-01T09:01:00 (or with its UTC offset, 2025-06-01T09:01:00+08:00)"
            )
        return value

    @property
    def modalities(self) -> frozenset[Modality]:
        found: set[Modality] = set()
        if self.content.strip():
            found.add(Modality.TEXT)
        if self.images:
            found.add(Modality.IMAGE)
        return frozenset(found)

    @property
    def patient_medical_images(self) -> list[ImageRef]:
        return [ref for ref in self.images if ref.is_patient_medical]


class Consultation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    department: str = Field(min_length=1)
    subspecialty: str | None = None
    events: list[Event] = Field(min_length=1)
    meta: dict[str, str | int | float | bool | None] = Field(default_factory=dict)

    @property
    def patient_medical_images(self) -> list[ImageRef]:
        return [ref for event in self.events for ref in event.patient_medical_images]

    @property
    def total_chars(self) -> int:
        return sum(len(event.content) for event in self.events)
