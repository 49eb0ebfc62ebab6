# src/control.mk: filled by its owner.
