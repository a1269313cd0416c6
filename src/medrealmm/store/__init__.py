"""Resumable run store (SQLite) shared by every phase and the review app."""

from medrealmm.store.runstore import DONE, FAILED, STORE_FILENAME, RunStore, existing_store

__all__ = ["DONE", "FAILED", "STORE_FILENAME", "RunStore", "existing_store"]
