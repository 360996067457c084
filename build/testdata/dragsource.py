#!/usr/bin/python3
"""A tiny GTK window that offers files as a text/uri-list drag source.

Used by desktop_drop_test.go to make a real X11 drag-and-drop onto the
Hark window under Xvfb: xdotool presses the mouse on this window, moves
it onto Hark in steps and releases it there. Run with Debian's python3
(python3-gi, gir1.2-gtk-3.0).

usage: dragsource.py TITLE FILE...
"""
import sys

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

title, files = sys.argv[1], sys.argv[2:]
uris = [GLib.filename_to_uri(f, None) for f in files]

win = Gtk.Window(title=title)
win.set_default_size(160, 120)
win.move(0, 0)
box = Gtk.EventBox()
box.add(Gtk.Label(label="drag me"))
win.add(box)

box.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [], Gdk.DragAction.COPY)
box.drag_source_add_uri_targets()


def on_get(_widget, _ctx, data, _info, _time):
    data.set_uris(uris)
    print("data-get " + data.get_target().name(), flush=True)


def on_failed(_widget, _ctx, result):
    print("drag-failed " + result.value_nick, flush=True)
    return False


def on_end(_widget, _ctx):
    print("drag-end", flush=True)


box.connect("drag-data-get", on_get)
box.connect("drag-end", on_end)
box.connect("drag-failed", on_failed)
win.connect("destroy", Gtk.main_quit)
win.show_all()
print("ready", flush=True)
Gtk.main()
