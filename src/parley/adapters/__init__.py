"""Adapters: agents written for other A2A frameworks, served by Parley unchanged. Each one
is a leaf package behind an optional extra; importing `parley` imports none of them."""
