// panel.js: placeholder
