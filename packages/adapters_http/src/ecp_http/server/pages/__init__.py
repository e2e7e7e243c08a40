"""The hosted offer's server-rendered pages: templates, the stylesheet, security headers, CSRF."""
