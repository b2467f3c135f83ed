"""The app's controllers: each owns one part of the app's state, starts its work on workers
through the app (so the app's one handler reports any failure) and defines the messages it posts."""
