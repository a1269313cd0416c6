"""Physician review web app: accounts, audit log, and the paper's human steps as web screens."""

from medrealmm.review.accounts import Role, User, create_user, parse_roles
from medrealmm.review.app import create_app
from medrealmm.review.context import ReviewSettings

__all__ = ["ReviewSettings", "Role", "User", "create_app", "create_user", "parse_roles"]
