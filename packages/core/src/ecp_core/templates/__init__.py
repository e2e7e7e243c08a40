"""Stored, versioned graph templates with parameters that instantiate into graphs (ADR 0045)."""

from ecp_core.templates.model import (
    CreateTemplateRequest,
    InstantiateTemplateRequest,
    TemplateInstantiation,
    TemplateListResponse,
    TemplateSource,
    TemplateVersion,
)
from ecp_core.templates.service import TemplateService
from ecp_core.templates.substitution import LITERAL, PARAM, substitute

__all__ = [
    "LITERAL",
    "PARAM",
    "CreateTemplateRequest",
    "InstantiateTemplateRequest",
    "TemplateInstantiation",
    "TemplateListResponse",
    "TemplateService",
    "TemplateSource",
    "TemplateVersion",
    "substitute",
]
