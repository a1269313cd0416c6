// Residual-PII pass: select text in a turn, pick a type, "添加": the span travels with the
// decision as add_span = "event:start:end:TYPE" (offsets into the turn's text as shown).
document.addEventListener("DOMContentLoaded", () => {
  const add = document.getElementById("span-add");
  if (!add) return;
  const shown = document.getElementById("span-selected");
  const list = document.getElementById("span-list");
  const type = document.getElementById("span-type");
  let picked = null;

  const offset = (content, node, within) => {
    const range = document.createRange();
    range.setStart(content, 0);
    range.setEnd(node, within);
    return range.toString().length;
  };

  document.addEventListener("selectionchange", () => {
    const selection = document.getSelection();
    if (!selection || selection.isCollapsed || selection.rangeCount === 0) return;
    const range = selection.getRangeAt(0);
    const start = range.startContainer.parentElement?.closest("p.content[data-event]");
    const end = range.endContainer.parentElement?.closest("p.content[data-event]");
    if (!start || start !== end) return;
    const from = offset(start, range.startContainer, range.startOffset);
    const to = offset(start, range.endContainer, range.endOffset);
    if (to <= from) return;
    picked = { event: start.dataset.event, start: from, end: to, text: range.toString() };
    shown.textContent = `#${picked.event}「${picked.text}」`;
    add.disabled = false;
  });

  add.addEventListener("click", () => {
    if (!picked) return;
    const item = document.createElement("li");
    const value = `${picked.event}:${picked.start}:${picked.end}:${type.value}`;
    const input = Object.assign(document.createElement("input"), {
      type: "hidden", name: "add_span", value,
    });
    const remove = Object.assign(document.createElement("button"), {
      type: "button", textContent: "删除",
    });
    remove.addEventListener("click", () => item.remove());
    item.append(`#${picked.event}「${picked.text}」→ ${type.options[type.selectedIndex].text} `,
      input, remove);
    item.dataset.span = value;
    list.append(item);
    picked = null;
    add.disabled = true;
    shown.textContent = "（未选中）";
  });
});
