"""Step 5: the same software everywhere, so that an engine built on one node loads on the others."""

import pytest

from rackproof.judging.capabilities import VERSIONS
from rackproof.measurements.nodes import NODES_GPU_DRIVER, NODES_L4T_RELEASE, NODES_PACKAGES
from rackproof.judging.versions import JETPACK_PACKAGES, first_problem, version_mismatch

pytestmark = [pytest.mark.step(5), pytest.mark.capability(VERSIONS)]


@pytest.mark.platform("thor")
def test_same_l4t_release(every_node, inventory, planned):
    found = {name: f"{release.release}.{release.revision}" for name, release in planned(NODES_L4T_RELEASE).items()}
    if problem := version_mismatch("L4T release (/etc/nv_tegra_release)", found, inventory.expect.l4t_release,
                                   "install the same JetPack release on every Thor (an Edge-LLM engine is "
                                   "built for one TensorRT)"):
        raise problem


@pytest.mark.platform("thor")
@pytest.mark.parametrize("package, pin", JETPACK_PACKAGES.items())
def test_same_package_version(every_node, inventory, package, pin, planned):
    found = {name: versions.get(package) for name, versions in planned(NODES_PACKAGES).items()}
    if problem := version_mismatch(f"{package} version (dpkg)", found, getattr(inventory.expect, pin),
                                   "update JetPack on the odd node (then rebuild its engines there)",
                                   missing="not installed", how=f"install JetPack on the nodes (`dpkg-query -W {package}` "
                                   "then names its version)"):
        raise problem


def test_same_gpu_driver_and_cuda(every_node, inventory, planned):
    banners = planned(NODES_GPU_DRIVER)
    fix = "update DGX OS on the odd node" if inventory.cluster.platform == "spark" else "update JetPack on the odd node"
    if problem := first_problem([
        version_mismatch("GPU driver (nvidia-smi)", {n: b.driver_version for n, b in banners.items()},
                         inventory.expect.driver_version, fix),
        version_mismatch("CUDA version (nvidia-smi)", {n: b.cuda_version for n, b in banners.items()},
                         inventory.expect.cuda_version, fix, missing="N/A",
                         how="a GPU driver whose nvidia-smi prints its 'CUDA Version'")]):
        raise problem
