/*
 * Unit tests for the local node's Ray images (node/rayimage.c): which
 * images are Ray's and the version their tag names.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "node/rayimage.h"

static void
check_image(const char *image, int ray, const char *ver)
{
	char got[64] = "x";

	CHECK(rayimage_parse(image, got, sizeof got) == ray);
	CHECK_STR(got, ver);
}

int
main(void)
{
	char small[4];

	check_image("rayproject/ray:2.52.0", 1, "2.52.0");
	check_image("rayproject/ray:2.52.0-py310", 1, "2.52.0");
	check_image("rayproject/ray:2.52.0-py311-cpu", 1, "2.52.0");
	check_image("rayproject/ray-ml:2.9.3-gpu", 1, "2.9.3");
	check_image("docker.io/rayproject/ray:2.53.0", 1, "2.53.0");
	check_image("index.docker.io/rayproject/ray:10.0.12", 1, "10.0.12");
	check_image("rayproject/ray:2.52.0@sha256:abc", 1, "2.52.0");
	/* Ray's, naming no release. */
	check_image("rayproject/ray", 1, "");
	check_image("rayproject/ray:latest", 1, "");
	check_image("rayproject/ray:nightly-py310", 1, "");
	check_image("rayproject/ray@sha256:abc", 1, "");
	check_image("rayproject/ray:2.52", 1, "");
	check_image("rayproject/ray:2.52.0rc1", 1, "");
	check_image("rayproject/ray:2.52.x", 1, "");
	/* Not Ray's. */
	check_image("rayproject/rayx:2.52.0", 0, "");
	check_image("myrepo/rayproject/ray:2.52.0", 0, "");
	check_image("quay.io/rayproject/ray:2.52.0", 0, "");
	check_image("rayproject/ray-llm:2.52.0", 0, "");
	check_image("busybox", 0, "");
	check_image("", 0, "");
	CHECK(rayimage_parse(NULL, small, sizeof small) == 0);
	/* A version longer than the buffer is none. */
	CHECK(rayimage_parse("rayproject/ray:2.52.0", small, sizeof small) == 1);
	CHECK_STR(small, "");
	return check_result("test-rayimage");
}
