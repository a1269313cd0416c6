"""De-identification of Chinese consultation text and images (paper 6.2)."""

from medrealmm.deid.spans import EntityType, Span, apply_placeholders, resolve_overlaps

__all__ = ["EntityType", "Span", "apply_placeholders", "resolve_overlaps"]
