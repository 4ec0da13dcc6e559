#!/bin/sh
echo "fake-tool: something it needs was not found" >&2
exit 127
