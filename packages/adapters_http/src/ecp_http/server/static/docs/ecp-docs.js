// Starts Swagger UI on GET /docs over this server's OpenAPI document (ADR 0056).
// A file of its own, not an inline script: the page's Content-Security-Policy runs scripts from
// this origin only. Paths are relative so the page also works behind a proxy's path prefix.
// From 150 tags and operations on, Swagger UI mounts only the operations near the viewport
// (ADR 0087): scrolling, the filter box and deep links reach every operation.
"use strict";
window.ui = SwaggerUIBundle({
  url: "openapi.json",
  dom_id: "#swagger-ui",
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
  deepLinking: true,
  filter: true,
  displayOperationId: true,
  docExpansion: "list",
  defaultModelsExpandDepth: 0,
  showExtensions: true,
  validatorUrl: null,
});
