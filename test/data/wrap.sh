#!/bin/sh
# A stand-in for bwrap/ssh/docker exec: announce itself, then run the rest.
echo "wrapped" >&2
exec "$@"
