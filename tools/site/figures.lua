-- figures.lua: a paragraph that is one image becomes a figure, its alt text the
-- caption (pandoc filter, for the web book and the PDF).
--
-- pandoc's markdown reader does this itself (implicit_figures), its commonmark
-- reader, which the book uses, does not before pandoc 3. An image whose title
-- starts "fig:" is what the HTML writer draws as <figure> with a <figcaption>.
function Para(p)
  if #p.content == 1 and p.content[1].t == "Image" then
    local img = p.content[1]
    if not img.title:match("^fig:") then img.title = "fig:" .. img.title end
    return p
  end
end
