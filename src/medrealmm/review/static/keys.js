// Keyboard shortcuts: an element with data-key="x" is clicked when x is pressed outside a
// text field (a radio is checked; data-focus="id" then moves the cursor into that field).
// Escape leaves a text field so the next key is a shortcut again. Each page lists its keys.
document.addEventListener("keydown", (event) => {
  const target = event.target;
  const typing = target instanceof HTMLElement &&
    (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) &&
      !["radio", "checkbox", "submit", "button"].includes(target.type));
  if (event.key === "Escape" && typing) { target.blur(); return; }
  if (typing || event.altKey || event.ctrlKey || event.metaKey) return;
  const element = document.querySelector(`[data-key="${CSS.escape(event.key)}"]`);
  if (!element) return;
  event.preventDefault();
  element.click();
  const focus = element.dataset.focus && document.getElementById(element.dataset.focus);
  if (focus) focus.focus();
  else if (element.type === "radio") element.focus();
});

// The de-identification task's outline toggle: show or hide the masked boxes on images.
document.addEventListener("change", (event) => {
  if (event.target instanceof HTMLInputElement && event.target.id === "outline-masked") {
    document.body.classList.toggle("show-masked", event.target.checked);
  }
});
