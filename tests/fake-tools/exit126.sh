#!/bin/sh
echo "fake-tool: something it needs could not run" >&2
exit 126
