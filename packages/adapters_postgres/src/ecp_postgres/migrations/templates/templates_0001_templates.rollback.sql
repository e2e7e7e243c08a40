DROP TABLE ecp_templates;
